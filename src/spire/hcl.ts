// A small writer for the HCL that SPIRE reads, from plain objects: scalars become `key = value`,
// objects become blocks, and a key written `Type "label"` becomes a labelled block (plugins).
// Generated configs and a user's extra settings are merged as objects before rendering.
import { ConfigError } from '../errors.js';

export type HclScalar = string | number | boolean;
export type HclValue = HclScalar | HclScalar[] | HclTree;
export interface HclTree {
  [key: string]: HclValue | null | undefined;
}

// An identifier, optionally followed by quoted labels: `agent`, `WorkloadAttestor "k8s"`.
const KEY = /^[A-Za-z_][A-Za-z0-9_-]*(?: "[^"\\\n]*")*$/;

function isTree(v: unknown): v is HclTree {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function quote(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

function scalar(v: HclScalar, path: string): string {
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'boolean') return String(v);
  if (!Number.isFinite(v)) throw new ConfigError(`${path} must be a finite number, got ${v}`);
  return String(v);
}

function renderBody(tree: HclTree, indent: string, path: string, out: string[]): void {
  for (const [key, value] of Object.entries(tree)) {
    if (value === null || value === undefined) continue;
    const at = path ? `${path}.${key}` : key;
    if (!KEY.test(key))
      throw new ConfigError(`${at}: HCL keys must be identifiers, optionally with quoted labels (e.g. WorkloadAttestor "k8s"), got ${JSON.stringify(key)}`);
    if (isTree(value)) {
      out.push(`${indent}${key} {`);
      renderBody(value, `${indent}  `, at, out);
      out.push(`${indent}}`);
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => {
        if (isTree(v) || Array.isArray(v))
          throw new ConfigError(`${at}[${i}] must be a string, number or boolean, got ${Array.isArray(v) ? 'a list' : 'an object'}`);
      });
      out.push(`${indent}${key} = [${value.map((v, i) => scalar(v, `${at}[${i}]`)).join(', ')}]`);
    } else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      out.push(`${indent}${key} = ${scalar(value, at)}`);
    } else {
      throw new ConfigError(`${at} must be a string, number, boolean, list or object, got ${typeof value}`);
    }
  }
}

/** The tree as HCL text; keys whose value is null or undefined are left out. */
export function renderHcl(tree: HclTree): string {
  const out: string[] = [];
  renderBody(tree, '', '', out);
  return `${out.join('\n')}\n`;
}

/**
 * `extra` over `base`: objects merge key by key, anything else replaces, null removes the key.
 * Neither input is modified.
 */
/** The health_checks block both SPIRE processes get: a loopback listener with /live and /ready. */
export function healthChecksBlock(port: number): HclTree {
  return {
    listener_enabled: true,
    bind_address: '127.0.0.1',
    // SPIRE reads the port as a string.
    bind_port: String(port),
    live_path: '/live',
    ready_path: '/ready',
  };
}

export function mergeHcl(base: HclTree, extra: HclTree | undefined): HclTree {
  if (!extra) return base;
  const out: HclTree = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) continue;
    if (value === null) delete out[key];
    else if (isTree(value) && isTree(out[key])) out[key] = mergeHcl(out[key] as HclTree, value);
    else out[key] = value;
  }
  return out;
}
