// SPIRE's Prometheus text (names and labels as spire-agent 1.16.0-dev prints them: a host label,
// method label values with / rewritten to _) read into metrics samples.
import { describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../../src/sample/index.js';
import { spireMetricsSampleFrom } from '../../src/spire/index.js';

const TEXT = `
# HELP spire_agent_workload_api_connections spire_agent_workload_api_connections
# TYPE spire_agent_workload_api_connections gauge
spire_agent_workload_api_connections{host="vm"} 7
# TYPE spire_agent_workload_api_connection counter
spire_agent_workload_api_connection{host="vm"} 11
# TYPE spire_agent_workload_api_rate_limit_exceeded counter
spire_agent_workload_api_rate_limit_exceeded{host="vm",method="_SpiffeWorkloadAPI_FetchJWTSVID"} 120
spire_agent_workload_api_rate_limit_exceeded{host="vm",method="_SpiffeWorkloadAPI_FetchX509SVID"} 3
spire_agent_workload_api_rate_limit_exceeded{host="vm",method="_some_Other"} 1
# TYPE spire_agent_rpc_workload_api_fetch_jwtsvid counter
spire_agent_rpc_workload_api_fetch_jwtsvid{status="OK"} 40
spire_agent_rpc_workload_api_fetch_jwtsvid{status="Unavailable"} 123
# TYPE spire_agent_workload_api_workload_attestation counter
spire_agent_workload_api_workload_attestation{status="OK"} 163
# TYPE spire_agent_workload_api_workload_attestation_elapsed_time summary
spire_agent_workload_api_workload_attestation_elapsed_time{status="OK",quantile="0.5"} 2.5
spire_agent_workload_api_workload_attestation_elapsed_time_sum{status="OK"} 815
spire_agent_workload_api_workload_attestation_elapsed_time_count{status="OK"} 163
spire_agent_workload_api_workload_attestor{attestor="k8s",status="OK"} 160
spire_agent_workload_api_workload_attestor{attestor="unix",status="OK"} 163
`;

describe('spireMetricsSampleFrom', () => {
  it('maps SPIRE series onto the sample, with SPIRE-only series under spire', () => {
    const s = spireMetricsSampleFrom(1000, parsePrometheusText(TEXT));
    expect(s).toEqual({
      kind: 'metrics',
      t: 1000,
      inflightAttestations: null,
      openConnections: 7,
      rejectedByKeyType: { 'selector-set': 124 },
      kubeletFetches: null,
      spire: {
        fetchJwtSvidByStatus: { OK: 40, Unavailable: 123 },
        attestationsByStatus: { OK: 163 },
        attestationElapsed: { sumMs: 815, count: 163 },
        rateLimitedByMethod: { '/SpiffeWorkloadAPI/FetchJWTSVID': 120, '/SpiffeWorkloadAPI/FetchX509SVID': 3, _some_Other: 1 },
        connectionsOpened: 11,
        attestorCalls: { 'k8s/OK': 160, 'unix/OK': 163 },
        runtime: null,
      },
    });
  });

  it('reads the Go runtime figures of the same endpoint: goroutines, heap and stack bytes', () => {
    const text = `${TEXT}
# TYPE go_goroutines gauge
go_goroutines 4312
go_memstats_heap_inuse_bytes 5.4525952e+07
go_memstats_stack_inuse_bytes 3.5848192e+07
go_memstats_sys_bytes 1.0876e+08
`;
    expect(spireMetricsSampleFrom(0, parsePrometheusText(text)).spire.runtime).toEqual({
      goroutines: 4312,
      heapInuseBytes: 54_525_952,
      stackInuseBytes: 35_848_192,
      sysBytes: 108_760_000,
    });
  });

  it('leaves what an idle agent has not printed yet empty or null', () => {
    const s = spireMetricsSampleFrom(0, parsePrometheusText('go_goroutines 12\n'));
    expect(s.openConnections).toBeNull();
    expect(s.rejectedByKeyType).toEqual({});
    expect(s.spire.attestationElapsed).toBeNull();
    expect(s.spire.fetchJwtSvidByStatus).toEqual({});
    expect(s.spire.runtime).toEqual({ goroutines: 12, heapInuseBytes: null, stackInuseBytes: null, sysBytes: null });
  });
});
