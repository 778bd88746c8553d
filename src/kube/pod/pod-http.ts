// The small JSON-over-HTTP surface of attestorm's own pods (generator, memory sampler), which the
// runner reaches through the API server's pod proxy: the request's path and a JSON answer.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The request's path without query and leading slashes, percent-decoded ("target-<uid>-<cid>"). */
export function podRequestPath(req: IncomingMessage): string {
  return decodeURIComponent((req.url ?? '/').split('?')[0]!).replace(/^\/+/, '');
}

/** A JSON answer: `send(code, body)`. */
export function jsonSender(res: ServerResponse): (code: number, body: unknown) => void {
  return (code, body) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}
