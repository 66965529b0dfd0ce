"""What is read about a target and judged by the rules: integrity, fakes, GPU use, diagnosis."""
