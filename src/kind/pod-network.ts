// Pod networking for the node image: kind's default CNI is kindnetd, whose source is not published
// as a Go module that the module proxy serves, so it cannot be built here. In its place the node
// image ships this: a DaemonSet (kind applies /kind/manifests/default-cni.yaml as it would
// kindnetd's) that writes each node's CNI config (ptp + host-local on the node's podCIDR), routes
// the other nodes' podCIDRs via their InternalIPs, and masquerades pod traffic leaving the pod
// subnet. No network policy, no IPv6.
export const ROUTES_IMAGE_NAME = 'localhost/attestorm-kind-routes';
export const ROUTES_SCRIPT_PATH = '/usr/local/bin/attestorm-kind-routes';

/** The CNI config for a node's pod CIDR (the script below writes the same, filled in). */
export const CNI_CONFLIST = `{"cniVersion":"0.4.0","name":"attestorm-kind","plugins":[{"type":"ptp","ipMasq":false,"mtu":1500,"ipam":{"type":"host-local","dataDir":"/run/cni-ipam-state","routes":[{"dst":"0.0.0.0/0"}],"ranges":[[{"subnet":"%s"}]]}},{"type":"portmap","capabilities":{"portMappings":true}}]}`;

export function routesScript(): string {
  return `#!/bin/bash
# The node's pod network (attestorm's stand-in for kindnetd; see src/kind/pod-network.ts).
set -u
: "\${NODE_NAME:?}" "\${POD_SUBNET:?}" "\${CONTROL_PLANE_ENDPOINT:?}"
sa=/var/run/secrets/kubernetes.io/serviceaccount
conf=/etc/cni/net.d/10-attestorm-kind.conflist
k() { kubectl --server "https://$CONTROL_PLANE_ENDPOINT" --certificate-authority "$sa/ca.crt" --token "$(cat "$sa/token")" "$@"; }
while true; do
  if nodes=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.podCIDR} {.status.addresses[?(@.type=="InternalIP")].address}{"\\n"}{end}'); then
    while read -r name cidr ip; do
      [ -n "$cidr" ] || continue
      if [ "$name" = "$NODE_NAME" ]; then
        want=$(printf '${CNI_CONFLIST}' "$cidr")
        if [ "$(cat "$conf" 2>/dev/null)" != "$want" ]; then
          printf '%s\\n' "$want" > "$conf.tmp" && mv "$conf.tmp" "$conf" && echo "CNI config for $cidr"
        fi
      elif [ -n "$ip" ] && ! ip route show "$cidr" | grep -q "via $ip "; then
        ip route replace "$cidr" via "$ip" && echo "route $cidr via $ip ($name)"
      fi
    done <<< "$nodes"
  else
    echo "listing nodes failed; retrying"
  fi
  rule=(POSTROUTING -s "$POD_SUBNET" ! -d "$POD_SUBNET" -m comment --comment attestorm-kind-routes -j MASQUERADE)
  iptables -t nat -C "\${rule[@]}" 2>/dev/null || iptables -t nat -A "\${rule[@]}"
  sleep 5
done
`;
}

/** kind's default-cni.yaml slot: kind fills {{ .PodSubnet }} and adds CONTROL_PLANE_ENDPOINT to the first container's env. */
export function podNetworkManifest(image: string): string {
  return `# attestorm's pod network for kind nodes built without a registry
# would you kindly template this file
# would you kindly patch this file
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: attestorm-kind-routes
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: attestorm-kind-routes
rules:
  - apiGroups: [""]
    resources: [nodes]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: attestorm-kind-routes
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: attestorm-kind-routes
subjects:
  - kind: ServiceAccount
    name: attestorm-kind-routes
    namespace: kube-system
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: attestorm-kind-routes
  namespace: kube-system
  labels:
    k8s-app: attestorm-kind-routes
spec:
  selector:
    matchLabels:
      k8s-app: attestorm-kind-routes
  template:
    metadata:
      labels:
        k8s-app: attestorm-kind-routes
    spec:
      hostNetwork: true
      priorityClassName: system-node-critical
      serviceAccountName: attestorm-kind-routes
      tolerations:
        - operator: Exists
      containers:
        - name: routes
          image: ${image}
          imagePullPolicy: Never
          command: [${ROUTES_SCRIPT_PATH}]
          env:
            - name: NODE_NAME
              valueFrom:
                fieldRef:
                  fieldPath: spec.nodeName
            - name: POD_SUBNET
              value: {{ .PodSubnet }}
          resources:
            requests:
              cpu: 10m
              memory: 20Mi
          securityContext:
            capabilities:
              add: [NET_ADMIN, NET_RAW]
          volumeMounts:
            - name: cni-cfg
              mountPath: /etc/cni/net.d
            - name: xtables-lock
              mountPath: /run/xtables.lock
      volumes:
        - name: cni-cfg
          hostPath:
            path: /etc/cni/net.d
        - name: xtables-lock
          hostPath:
            path: /run/xtables.lock
            type: FileOrCreate
`;
}
