#if canImport(Glibc)
    import Glibc
#endif

/// Which event loop the lws contexts of this process run on.
///
/// Debian's lws 4.1 defaults to `poll()`, which walks every descriptor on every wake-up, so
/// its cost grows with the number of connections, idle ones included. The same build ships
/// event-library plugins; the transport uses the libev one (package
/// `libwebsockets-evlib-ev`), whose epoll backend costs per ready descriptor only.
/// libev rather than libuv: its loop can be run one iteration at a time and destroyed right
/// after `lws_context_destroy` (libuv needs further loop runs to close its handles), and the
/// service loop stays the same shape as on poll(). If the plugin cannot be loaded, the context
/// falls back to poll() (with a line on stderr).
enum EventLoopChoice: Equatable {
    /// lws's libev plugin, epoll backend (the default).
    case libev
    /// lws's built-in poll() loop: `WATCHRELAY_EVENT_LOOP=poll`, for A/B measurements.
    case poll

    /// Read once per process from `WATCHRELAY_EVENT_LOOP` (`libev`, the default, or `poll`).
    static let current: EventLoopChoice = {
        if let text = getenv("WATCHRELAY_EVENT_LOOP"), String(cString: text) == "poll" { return .poll }
        return .libev
    }()
}
