// The spire-server configuration attestorm generates for a local run: everything on loopback and
// under one folder, a SQLite datastore, the in-memory key manager (it signs its own CA) and the
// join_token node attestor, with health checks on a port of its own for readiness.
import { join } from 'node:path';
import { healthChecksBlock, mergeHcl, renderHcl, type HclTree } from './hcl.js';

export interface ServerConfigInput {
  trustDomain: string;
  /** Where the datastore, data dir and admin socket live (short: the socket path is limited). */
  dir: string;
  port: number;
  healthPort: number;
  logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** Merged over the generated tree (objects key by key, null removes). */
  extra?: HclTree;
}

export const serverAdminSocket = (dir: string): string => join(dir, 'server-admin.sock');

export function serverConfigTree(c: ServerConfigInput): HclTree {
  const tree: HclTree = {
    server: {
      bind_address: '127.0.0.1',
      bind_port: c.port,
      socket_path: serverAdminSocket(c.dir),
      trust_domain: c.trustDomain,
      data_dir: join(c.dir, 'server-data'),
      log_level: c.logLevel ?? 'INFO',
    },
    plugins: {
      'DataStore "sql"': { plugin_data: { database_type: 'sqlite3', connection_string: join(c.dir, 'server-data', 'datastore.sqlite3') } },
      'KeyManager "memory"': { plugin_data: {} },
      'NodeAttestor "join_token"': { plugin_data: {} },
    },
    health_checks: healthChecksBlock(c.healthPort),
  };
  return mergeHcl(tree, c.extra);
}

export function renderServerConfig(c: ServerConfigInput): string {
  return renderHcl(serverConfigTree(c));
}
