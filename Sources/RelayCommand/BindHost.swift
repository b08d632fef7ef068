import CLIArguments
import Foundation

/// `--host`: what libwebsockets can bind. lws takes an IP address or an interface name, and
/// answered a host name (`--host localhost`) with "iface localhost port 0 DOESN'T EXIST" twice
/// and "last errno: Success". A host name is resolved here, to its first IPv4 address (else its
/// first IPv6 one); anything that is none of the three is a usage error that says so.
public enum BindHost {
    /// The address or interface name to give lws for `host`.
    public static func resolve(_ host: String, option: String = "--host") throws -> String {
        if isAddress(host) || if_nametoindex(host) != 0 { return host }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else {
            throw Arguments.UsageError(
                description: "\(option): '\(host)' is not an IP address, an interface of this machine or a host name it resolves")
        }
        defer { freeaddrinfo(first) }
        var addresses: [(family: Int32, text: String)] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let entry = node {
            if let text = numeric(entry.pointee) { addresses.append((entry.pointee.ai_family, text)) }
            node = entry.pointee.ai_next
        }
        guard let chosen = addresses.first(where: { $0.family == AF_INET }) ?? addresses.first else {
            throw Arguments.UsageError(description: "\(option): '\(host)' resolves to no IPv4 or IPv6 address")
        }
        return chosen.text
    }

    /// Whether `text` is an IPv4 or IPv6 address literal.
    static func isAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    private static func numeric(_ entry: addrinfo) -> String? {
        guard let address = entry.ai_addr, entry.ai_family == AF_INET || entry.ai_family == AF_INET6 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, entry.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return nil
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
