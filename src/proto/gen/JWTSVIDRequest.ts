// Original file: proto/workload.proto


export interface JWTSVIDRequest {
  'audience'?: (string)[];
  'spiffe_id'?: (string);
}

export interface JWTSVIDRequest__Output {
  'audience': (string)[];
  'spiffe_id': (string);
}
