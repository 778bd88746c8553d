// The generator's closed vocabularies (methods, connection modes, retry policies, clients), in a
// module of their own so both option schemas (options.ts, bystanders-schema.ts) can use them.
import type { ConnectionMode, LoadClient, LoadMethod, RetryPolicy } from './worker/messages.js';

export const LOAD_METHODS: readonly LoadMethod[] = ['FetchJWTSVID', 'FetchX509SVID', 'FetchX509Bundles', 'FetchJWTBundles', 'ValidateJWTSVID'];
export const CONNECTION_MODES: readonly ConnectionMode[] = ['per-call', 'per-worker', 'per-retry'];
export const RETRY_POLICIES: readonly RetryPolicy[] = ['immediate', 'backoff'];
export const LOAD_CLIENTS: readonly LoadClient[] = ['h2', 'grpc-js', 'native'];
