// Worker entry with the lean transport (gRPC written on node:http2): no grpc-js in the process.
import { runWorker } from './worker-loop.js';
import { H2Caller } from './transport-h2.js';

runWorker((socket, mode, deadlineMs, audience, needToken) => new H2Caller(socket, mode, deadlineMs, audience, needToken));
