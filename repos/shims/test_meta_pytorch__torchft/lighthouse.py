"""pytest-reb helper for meta-pytorch/torchft (C1, C3, C4): the lighthouse of the replica groups.

train_ddp.py's Manager joins a quorum through a torchft lighthouse named by
``TORCHFT_LIGHTHOUSE``.  Before each stage the official probe started one in
the background under the report's python, ``LighthouseServer(bind="[::]:0",
min_replicas=1, join_timeout_ms=60000)``, read the address it printed, exported
it and killed the server after the run (in C4 both replica groups share it).
This is our own version of that helper: it starts the same server, prints
``TORCHFT_LIGHTHOUSE=<address>`` for the stage's ``Helper`` to read, and
serves until it is terminated.  torchft is the library under test, so using
it here is what the stage needs anyway.
"""

import signal
import sys
import time

from torchft.coordination import LighthouseServer


def main():
    server = LighthouseServer(bind="[::]:0", min_replicas=1, join_timeout_ms=60000)

    def stop(signum, frame):
        server.shutdown()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"TORCHFT_LIGHTHOUSE={server.address()}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
