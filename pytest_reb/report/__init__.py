"""What a run shows people: the terminal pyramid, ``summary.json``, and (later) HTML and tables."""
