// Faults on the node's kubelet, through the emulator's run-time switches: extra latency, HTTP 500s,
// down (connections refused) and stall (requests accepted and never answered).
import type { KubeletFaultControls } from '../sandbox/index.js';
import { formatDuration } from '../util/index.js';
import { FaultNotApplied, type FaultStarter } from './action.js';
import type { FaultTarget } from './fault-target.js';

function kubeletOf(target: FaultTarget): KubeletFaultControls {
  if (!target.kubelet) throw new FaultNotApplied('the target has no kubelet emulator');
  return target.kubelet;
}

export const kubeletLatency: FaultStarter<'kubelet-latency'> = async (f, target) => {
  const k = kubeletOf(target);
  k.setExtraLatency(f.value);
  return {
    detail: `kubelet answers ${formatDuration(f.value)} later`,
    end: async () => {
      k.setExtraLatency(0);
      return 'kubelet latency back to its configured value';
    },
  };
};

export const kubeletErrors: FaultStarter<'kubelet-errors'> = async (f, target) => {
  const k = kubeletOf(target);
  k.setErrorRate(f.rate);
  return {
    detail: `kubelet answers ${Math.round(f.rate * 100)}% of /pods requests with HTTP 500`,
    end: async () => {
      k.setErrorRate(null);
      return 'kubelet error rate back to its configured value';
    },
  };
};

export const kubeletDown: FaultStarter<'kubelet-down'> = async (_f, target) => {
  const k = kubeletOf(target);
  await k.goDown();
  return {
    detail: 'kubelet stopped listening (connections refused, open ones dropped)',
    end: async () => {
      await k.comeUp();
      return 'kubelet listening again on the same port';
    },
  };
};

export const kubeletStall: FaultStarter<'kubelet-stall'> = async (_f, target) => {
  const k = kubeletOf(target);
  k.setStall(true);
  return {
    detail: 'kubelet accepts requests and never answers',
    end: async () => {
      k.setStall(false);
      return 'kubelet answers again (stalled connections destroyed)';
    },
  };
};
