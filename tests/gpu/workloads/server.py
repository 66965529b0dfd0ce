"""A model server on loopback: the model on the GPU, one JSON answer per POST /predict."""

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

import torch
from common import net

torch.manual_seed(0)
MODEL = net().cuda().eval()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.reply({"status": "ok"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with torch.inference_mode():
            x = torch.tensor(body["inputs"], dtype=torch.float32, device="cuda")
            y = MODEL(x).squeeze(-1).tolist()
        self.reply({"outputs": y})

    def reply(self, data: dict) -> None:
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
