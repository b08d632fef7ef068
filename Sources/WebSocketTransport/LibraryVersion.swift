import CWebSockets

/// The libwebsockets this process runs on (for `--version` and bug reports).
public enum LibWebSockets {
    /// lws's own version string at run time, e.g. `4.1.6` (the shared library loaded, which may
    /// differ from the headers the build saw). lws appends `-` and the git hash it was built
    /// from; Debian's build has none, so its bare `4.1.6-` loses the dash.
    public static var version: String {
        var text = String(cString: lws_get_library_version())
        while text.hasSuffix("-") { text.removeLast() }
        return text
    }
}
