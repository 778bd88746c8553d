// Original file: proto/workload.proto


export interface X509SVIDRequest {
}

export interface X509SVIDRequest__Output {
}
