// JSON → google.protobuf.Struct in the shape grpc-js/protobufjs serialize (fields map, one "kind"
// per Value), for ValidateJWTSVID's claims.
import type { Struct } from '../proto/index.js';

type Value = NonNullable<Struct['fields']>[string];

export function toStruct(obj: Record<string, unknown>): Struct {
  const fields: Record<string, Value> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v !== undefined) fields[k] = toValue(v);
  }
  return { fields };
}

export function toValue(v: unknown): Value {
  if (v === null || v === undefined) return { nullValue: 'NULL_VALUE', kind: 'nullValue' };
  switch (typeof v) {
    case 'number':
      return { numberValue: v, kind: 'numberValue' };
    case 'string':
      return { stringValue: v, kind: 'stringValue' };
    case 'boolean':
      return { boolValue: v, kind: 'boolValue' };
    case 'bigint':
      return { numberValue: Number(v), kind: 'numberValue' };
    case 'object':
      if (Array.isArray(v)) return { listValue: { values: v.map(toValue) }, kind: 'listValue' };
      return { structValue: toStruct(v as Record<string, unknown>), kind: 'structValue' };
    default:
      // Functions and symbols cannot come out of a JWT's JSON; keep the claim visible as text.
      return { stringValue: String(v), kind: 'stringValue' };
  }
}

/** Struct → plain JSON (what clients and tests want back). */
export function fromStruct(s: Struct | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s?.fields ?? {})) out[k] = fromValue(v);
  return out;
}

export function fromValue(v: Value | null | undefined): unknown {
  switch (v?.kind) {
    case 'numberValue':
      return Number(v.numberValue);
    case 'stringValue':
      return v.stringValue;
    case 'boolValue':
      return v.boolValue;
    case 'structValue':
      return fromStruct(v.structValue);
    case 'listValue':
      return (v.listValue?.values ?? []).map(fromValue);
    default:
      return null;
  }
}
