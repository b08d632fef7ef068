import CLIArguments
import Foundation
import RelayServer

/// `--host`: what libwebsockets can bind. lws takes an IP address or an interface name, and
/// answered a host name (`--host localhost`) with "iface localhost port 0 DOESN'T EXIST" twice
/// and "last errno: Success". A host name is resolved here, to its first IPv4 address (else its
/// first IPv6 one), and an interface name to its IPv4 address (so the printed URL is one a
/// client can use, not `ws://lo:8765/v1`); anything that is none of the three is a usage error
/// that says so.
public enum BindHost {
    /// The address (or, for an interface without an IPv4 address, the interface name) to give
    /// lws for `host`.
    public static func resolve(_ host: String, option: String = "--host") throws -> String {
        if isAddress(host) { return host }
        if if_nametoindex(host) != 0 { return interfaceAddress(host) ?? host }
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
            let item = entry.pointee
            if let address = item.ai_addr, item.ai_family == AF_INET || item.ai_family == AF_INET6,
                let text = numeric(address, length: item.ai_addrlen)
            {
                addresses.append((item.ai_family, text))
            }
            node = entry.pointee.ai_next
        }
        guard let chosen = addresses.first(where: { $0.family == AF_INET }) ?? addresses.first else {
            throw Arguments.UsageError(description: "\(option): '\(host)' resolves to no IPv4 or IPv6 address")
        }
        return chosen.text
    }

    /// The first IPv4 address of the interface named `name`, if it has one.
    static func interfaceAddress(_ name: String) -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(first) }
        var node: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = node {
            let item = entry.pointee
            if let address = item.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                String(cString: item.ifa_name) == name,
                let text = numeric(address, length: socklen_t(MemoryLayout<sockaddr_in>.size))
            {
                return text
            }
            node = item.ifa_next
        }
        return nil
    }

    /// Whether `text` is an IPv4 or IPv6 address literal.
    static func isAddress(_ text: String) -> Bool {
        RelayServerConfiguration.ipAddress(text) != nil
    }

    /// `address` as numeric text (`127.0.0.1`, `::1`).
    private static func numeric(_ address: UnsafePointer<sockaddr>, length: socklen_t) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
