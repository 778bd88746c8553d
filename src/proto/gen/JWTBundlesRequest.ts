// Original file: proto/workload.proto


export interface JWTBundlesRequest {
}

export interface JWTBundlesRequest__Output {
}
