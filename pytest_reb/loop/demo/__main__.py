"""``python -m pytest_reb.loop.demo``: build the demo's images, or its checkout alone."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import docker
from docker.errors import DockerException

from pytest_reb.loop.demo.checkout import make_demo_checkout
from pytest_reb.loop.demo.images import DEMO_VARIANTS, ensure_demo_image
from pytest_reb.loop.images import ImageError, ensure_base_image, one_line


def main(argv: Sequence[str] | None = None) -> int:
    """Build the images from the command line; print their tags, one a line."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_reb.loop.demo",
        description="Build pytest-reb's local images (no registry is used).",
    )
    parser.add_argument("what", choices=["base", "images", "checkout"],
                        help="base image only, base + demos, or the demo's checkout alone")
    parser.add_argument("dest", nargs="?", type=Path,
                        help="checkout: the new folder (a GPU machine without Docker verifies "
                             "it with --reb-host=local:// --reb-repo-dir DEST)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    if args.what == "checkout":
        if args.dest is None or args.dest.exists():
            parser.error("checkout needs a DEST folder that does not exist yet")
        try:
            print(make_demo_checkout(args.dest), flush=True)
        except ImageError as exc:
            print(f"error: {one_line(str(exc))}", file=sys.stderr)
            return 1
        return 0
    try:
        client = docker.from_env()
        client.ping()
    except DockerException as exc:
        print(
            f"error: the Docker daemon does not answer ({exc}); run .ci/setup-docker.sh",
            file=sys.stderr,
        )
        return 1
    try:
        print(ensure_base_image(client), flush=True)
        if args.what == "images":
            for variant in DEMO_VARIANTS:
                print(ensure_demo_image(client, variant), flush=True)
    except (ImageError, DockerException) as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return 1
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
