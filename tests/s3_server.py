"""A real S3 API for the tests: moto's server on a free local port, reached with s3fs."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

#: What s3fs/botocore need to reach the local server (no real credentials).
CREDENTIALS = dict(
    AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION="us-east-1"
)


@dataclass
class S3:
    """A running server: its endpoint and the environment that points clients at it."""

    endpoint: str

    @property
    def env(self) -> dict[str, str]:
        return {**CREDENTIALS, "AWS_ENDPOINT_URL": self.endpoint}

    def bucket(self) -> str:
        """A new empty bucket; its ``s3://`` URL."""
        import s3fs

        name = f"b-{uuid.uuid4().hex[:12]}"
        s3fs.S3FileSystem(endpoint_url=self.endpoint, key="testing", secret="testing").mkdir(name)
        return f"s3://{name}"

    def fs(self):  # noqa: ANN201 - s3fs.S3FileSystem
        """A fresh client (no cached listings)."""
        import s3fs

        return s3fs.S3FileSystem(
            endpoint_url=self.endpoint, key="testing", secret="testing", skip_instance_cache=True
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def s3_server() -> Iterator[S3]:
    """Start moto's S3 server on 127.0.0.1 (a thread of this process); stop it after."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    saved = {k: os.environ.get(k) for k in (*CREDENTIALS, "AWS_ENDPOINT_URL")}
    info = S3(f"http://127.0.0.1:{port}")
    os.environ.update(info.env)
    try:
        yield info
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()
