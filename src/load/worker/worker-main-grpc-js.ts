// Worker entry with a real grpc-js client (one channel per connection), for comparison with what
// applications built on grpc-js do.
import { Caller } from './caller.js';
import { runWorker } from './worker-loop.js';

runWorker((socket, mode, deadlineMs, audience, needToken) => new Caller(socket, mode, deadlineMs, audience, needToken));
