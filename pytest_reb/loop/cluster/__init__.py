"""Beyond one machine: a run matrix on a cluster scheduler.

``plan`` decides what each task needs (pairs, GPUs, time) from the matrix and
the repository modules; ``slurm`` submits it as a job array with a dependent
merge job; ``k8s`` writes it as Kubernetes Indexed Jobs.  ``cli`` adds
``reb slurm`` and ``reb k8s``.
"""
