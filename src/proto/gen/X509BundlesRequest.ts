// Original file: proto/workload.proto


export interface X509BundlesRequest {
}

export interface X509BundlesRequest__Output {
}
