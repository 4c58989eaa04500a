// What limits per client address count by. An IPv4 address is one client; an IPv6 site or host is
// given a whole /64 (its privacy addresses change within it), so one could otherwise bring 2^64
// addresses, each with a budget of its own. The price: the clients of one IPv6 network share one. Parsed by ipaddr.js (the parser proxy-addr uses).
import ipaddr from 'ipaddr.js';

/** The address as limits count it: IPv4 as is (an IPv4-mapped or NAT64 IPv6 address as its IPv4), IPv6 by its /64. */
export function addressKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  if (!ip.includes(':')) return ip;
  try {
    const a = ipaddr.parse(ip);
    if (a.kind() === 'ipv4') return a.toString();
    const v6 = a as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    // NAT64 (64:ff9b::/96, RFC 6052): IPv4 clients of an IPv6-only host, each its own address.
    if (v6.range() === 'rfc6052') return ipaddr.fromByteArray(v6.toByteArray().slice(12)).toString();
    return `${v6.parts
      .slice(0, 4)
      .map((p) => p.toString(16))
      .join(':')}::/64`;
  } catch {
    return ip;
  }
}
