import CWebSockets

/// The lws callback of every protocol of every context this module creates.
///
/// A C function pointer can only be formed from a top-level func or a literal closure, so the
/// Swift owner is found through the context's user pointer instead of a capture. Runs on the
/// context's service thread only; Swift errors never cross into C (nothing here throws).
func lwsCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ data: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    return ServiceCore.fromOpaque(owner).handle(wsi, reason, user, data, length)
}

/// Called by lws at the shutdown deadline; it only wakes `lws_service`, and the loop in
/// ``ServiceCore/run()`` notices the deadline passed.
func shutdownTimerFired(_ timer: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {}

/// Called by lws when the server handler's timer is due; `timer` is the first member of the
/// `relay_timer` in ``LWSContextResources``, whose owner is the context's ``ServiceCore``.
func handlerTimerFired(_ timer: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    timerOwner(timer)?.handlerTimerDidFire()
}

/// Called by lws when a server's keepalive timer is due (the same layout as the handler's).
func keepaliveTimerFired(_ timer: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    timerOwner(timer)?.keepaliveTimerDidFire()
}

/// The core that owns a `relay_timer`, from its sul (the first member).
private func timerOwner(_ timer: UnsafeMutablePointer<lws_sorted_usec_list_t>?) -> ServiceCore? {
    guard let timer else { return nil }
    let owned = UnsafeMutableRawPointer(timer).assumingMemoryBound(to: relay_timer.self)
    return owned.pointee.owner.map(ServiceCore.fromOpaque)
}

extension ServiceCore {
    /// The core behind a context's user pointer.
    ///
    /// The pointer is the core retained once by ``ServiceLoop`` before `lws_create_context` and
    /// released only after `lws_context_destroy` returned, so it outlives every callback; taking
    /// it unretained adds no ownership.
    static func fromOpaque(_ pointer: UnsafeMutableRawPointer) -> ServiceCore {
        Unmanaged<ServiceCore>.fromOpaque(pointer).takeUnretainedValue()
    }
}
