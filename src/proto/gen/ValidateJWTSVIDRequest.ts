// Original file: proto/workload.proto


export interface ValidateJWTSVIDRequest {
  'audience'?: (string);
  'svid'?: (string);
}

export interface ValidateJWTSVIDRequest__Output {
  'audience': (string);
  'svid': (string);
}
