// Original file: proto/workload.proto

import type { Struct as _google_protobuf_Struct, Struct__Output as _google_protobuf_Struct__Output } from './google/protobuf/Struct.js';

export interface ValidateJWTSVIDResponse {
  'spiffe_id'?: (string);
  'claims'?: (_google_protobuf_Struct | null);
}

export interface ValidateJWTSVIDResponse__Output {
  'spiffe_id': (string);
  'claims': (_google_protobuf_Struct__Output | null);
}
