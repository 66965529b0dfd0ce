"""What a run is made of before anything runs: its id, its targets as named, its shards."""
