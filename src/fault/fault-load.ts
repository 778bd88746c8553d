// Faults on the storm itself, carried out by the runner's hooks: pod churn (pods replaced by new
// ones the kubelet does not list yet) and a burst of extra workers for a window (a deploy wave).
import { FaultNotApplied, type FaultStarter } from './action.js';

export const podChurn: FaultStarter<'pod-churn'> = async (f, target) => {
  if (!target.churnPods) throw new FaultNotApplied('the target cannot replace storm pods');
  await target.churnPods(f.count);
  return { detail: `replaced ${f.count} storm pod${f.count === 1 ? '' : 's'} with new ones (new UIDs)` };
};

export const burst: FaultStarter<'burst'> = async (f, target) => {
  if (!target.startBurst) throw new FaultNotApplied('the target cannot add storm workers');
  const handle = await target.startBurst(f.workers);
  return {
    detail: handle.detail ?? `${f.workers} extra storm workers joined`,
    end: async () => (await handle.stop()) || `${f.workers} extra storm workers stopped`,
  };
};
