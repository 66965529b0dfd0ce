"""The benchmark loop outside pytest: the ``reb`` command, task images, agents, clusters, demo."""
