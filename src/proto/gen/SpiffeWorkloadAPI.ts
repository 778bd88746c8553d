// Original file: proto/workload.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { JWTBundlesRequest as _JWTBundlesRequest, JWTBundlesRequest__Output as _JWTBundlesRequest__Output } from './JWTBundlesRequest.js';
import type { JWTBundlesResponse as _JWTBundlesResponse, JWTBundlesResponse__Output as _JWTBundlesResponse__Output } from './JWTBundlesResponse.js';
import type { JWTSVIDRequest as _JWTSVIDRequest, JWTSVIDRequest__Output as _JWTSVIDRequest__Output } from './JWTSVIDRequest.js';
import type { JWTSVIDResponse as _JWTSVIDResponse, JWTSVIDResponse__Output as _JWTSVIDResponse__Output } from './JWTSVIDResponse.js';
import type { ValidateJWTSVIDRequest as _ValidateJWTSVIDRequest, ValidateJWTSVIDRequest__Output as _ValidateJWTSVIDRequest__Output } from './ValidateJWTSVIDRequest.js';
import type { ValidateJWTSVIDResponse as _ValidateJWTSVIDResponse, ValidateJWTSVIDResponse__Output as _ValidateJWTSVIDResponse__Output } from './ValidateJWTSVIDResponse.js';
import type { X509BundlesRequest as _X509BundlesRequest, X509BundlesRequest__Output as _X509BundlesRequest__Output } from './X509BundlesRequest.js';
import type { X509BundlesResponse as _X509BundlesResponse, X509BundlesResponse__Output as _X509BundlesResponse__Output } from './X509BundlesResponse.js';
import type { X509SVIDRequest as _X509SVIDRequest, X509SVIDRequest__Output as _X509SVIDRequest__Output } from './X509SVIDRequest.js';
import type { X509SVIDResponse as _X509SVIDResponse, X509SVIDResponse__Output as _X509SVIDResponse__Output } from './X509SVIDResponse.js';

export interface SpiffeWorkloadAPIClient extends grpc.Client {
  FetchJWTBundles(argument: _JWTBundlesRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_JWTBundlesResponse__Output>;
  FetchJWTBundles(argument: _JWTBundlesRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_JWTBundlesResponse__Output>;
  fetchJwtBundles(argument: _JWTBundlesRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_JWTBundlesResponse__Output>;
  fetchJwtBundles(argument: _JWTBundlesRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_JWTBundlesResponse__Output>;
  
  FetchJWTSVID(argument: _JWTSVIDRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_JWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  FetchJWTSVID(argument: _JWTSVIDRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_JWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  FetchJWTSVID(argument: _JWTSVIDRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_JWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  FetchJWTSVID(argument: _JWTSVIDRequest, callback: grpc.requestCallback<_JWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  fetchJwtsvid(argument: _JWTSVIDRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_JWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  fetchJwtsvid(argument: _JWTSVIDRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_JWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  fetchJwtsvid(argument: _JWTSVIDRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_JWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  fetchJwtsvid(argument: _JWTSVIDRequest, callback: grpc.requestCallback<_JWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  
  FetchX509Bundles(argument: _X509BundlesRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_X509BundlesResponse__Output>;
  FetchX509Bundles(argument: _X509BundlesRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_X509BundlesResponse__Output>;
  fetchX509Bundles(argument: _X509BundlesRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_X509BundlesResponse__Output>;
  fetchX509Bundles(argument: _X509BundlesRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_X509BundlesResponse__Output>;
  
  FetchX509SVID(argument: _X509SVIDRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_X509SVIDResponse__Output>;
  FetchX509SVID(argument: _X509SVIDRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_X509SVIDResponse__Output>;
  fetchX509Svid(argument: _X509SVIDRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_X509SVIDResponse__Output>;
  fetchX509Svid(argument: _X509SVIDRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_X509SVIDResponse__Output>;
  
  ValidateJWTSVID(argument: _ValidateJWTSVIDRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ValidateJWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  ValidateJWTSVID(argument: _ValidateJWTSVIDRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ValidateJWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  ValidateJWTSVID(argument: _ValidateJWTSVIDRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ValidateJWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  ValidateJWTSVID(argument: _ValidateJWTSVIDRequest, callback: grpc.requestCallback<_ValidateJWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  validateJwtsvid(argument: _ValidateJWTSVIDRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ValidateJWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  validateJwtsvid(argument: _ValidateJWTSVIDRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ValidateJWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  validateJwtsvid(argument: _ValidateJWTSVIDRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ValidateJWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  validateJwtsvid(argument: _ValidateJWTSVIDRequest, callback: grpc.requestCallback<_ValidateJWTSVIDResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface SpiffeWorkloadAPIHandlers extends grpc.UntypedServiceImplementation {
  FetchJWTBundles: grpc.handleServerStreamingCall<_JWTBundlesRequest__Output, _JWTBundlesResponse>;
  
  FetchJWTSVID: grpc.handleUnaryCall<_JWTSVIDRequest__Output, _JWTSVIDResponse>;
  
  FetchX509Bundles: grpc.handleServerStreamingCall<_X509BundlesRequest__Output, _X509BundlesResponse>;
  
  FetchX509SVID: grpc.handleServerStreamingCall<_X509SVIDRequest__Output, _X509SVIDResponse>;
  
  ValidateJWTSVID: grpc.handleUnaryCall<_ValidateJWTSVIDRequest__Output, _ValidateJWTSVIDResponse>;
  
}

export interface SpiffeWorkloadAPIDefinition extends grpc.ServiceDefinition {
  FetchJWTBundles: MethodDefinition<_JWTBundlesRequest, _JWTBundlesResponse, _JWTBundlesRequest__Output, _JWTBundlesResponse__Output>
  FetchJWTSVID: MethodDefinition<_JWTSVIDRequest, _JWTSVIDResponse, _JWTSVIDRequest__Output, _JWTSVIDResponse__Output>
  FetchX509Bundles: MethodDefinition<_X509BundlesRequest, _X509BundlesResponse, _X509BundlesRequest__Output, _X509BundlesResponse__Output>
  FetchX509SVID: MethodDefinition<_X509SVIDRequest, _X509SVIDResponse, _X509SVIDRequest__Output, _X509SVIDResponse__Output>
  ValidateJWTSVID: MethodDefinition<_ValidateJWTSVIDRequest, _ValidateJWTSVIDResponse, _ValidateJWTSVIDRequest__Output, _ValidateJWTSVIDResponse__Output>
}
