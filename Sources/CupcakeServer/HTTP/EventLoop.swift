import CMicroHTTPD
import Foundation
import Synchronization

/// One libmicrohttpd daemon in external-polling mode (epoll) and the thread that drives it.
///
/// All of a server's loops share its listening socket. A pass is one `MHD_run` over the ready
/// connections; after it the loop lets the handler finish the work the pass deferred (the group
/// commit of its POSTs, see ``HTTPHandler/finishPass(worker:)``) and, if that answered anything,
/// runs again at once to send the answers. Nothing crosses threads on the way: the commit and
/// the send happen on the thread that read the request.
///
/// A request whose answer comes later is not suspended (that costs two `epoll_ctl` calls per
/// request): libmicrohttpd calls the access handler again on each pass while a fully received
/// request has no response, and the handler queues the answer once it is there.
final class EventLoop: @unchecked Sendable {
    // Safe: `daemon` and `thread` are set by start() before the thread runs and are then used
    // only by that thread (and by join() after it ended); `wakeFD` may be written by any thread;
    // the rest is atomic or immutable.
    let index: Int
    unowned let server: HTTPServer
    private var daemon: OpaquePointer?
    private var thread = pthread_t()
    private var started = false
    private let wakeFD: Int32
    private let threadID = Atomic<UInt>(0)
    /// A wake is written and not yet seen by the loop: later wakes need no write.
    private let wakePending = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let graceNanoseconds = Atomic<UInt64>(0)
    /// Requests handed to the handler whose answers have not been queued yet (loop thread only).
    var awaiting = 0

    init(index: Int, server: HTTPServer) {
        self.index = index
        self.server = server
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
    }

    deinit {
        if wakeFD >= 0 { close(wakeFD) }
    }

    /// Starts the daemon on `listenSocket`; `false` when libmicrohttpd refuses.
    func startDaemon(flags: UInt32, listenSocket: Int32, connectionLimit: Int, idleTimeoutSeconds: Int) -> Bool {
        guard wakeFD >= 0 else { return false }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let notify = unsafeBitCast(requestCompleted as MHD_RequestCompletedCallback, to: UnsafeRawPointer.self)
        let arguments: [any CVarArg] = [
            MHD_OPTION.LISTEN_SOCKET.rawValue, listenSocket,
            MHD_OPTION.CONNECTION_LIMIT.rawValue, UInt32(connectionLimit),
            MHD_OPTION.CONNECTION_TIMEOUT.rawValue, UInt32(idleTimeoutSeconds),
            // libmicrohttpd zeroes a connection's whole memory pool after every request; its
            // default 32 KiB made that memset 4% of the server's time. 16 KiB still holds
            // request headers of 8 KiB and more (bodies stream through it in pieces).
            MHD_OPTION.CONNECTION_MEMORY_LIMIT.rawValue, 16 * 1024,
            MHD_OPTION.NOTIFY_COMPLETED.rawValue, Int(bitPattern: notify), Int(bitPattern: context),
            MHD_OPTION.END.rawValue,
        ]
        daemon = withVaList(arguments) { list in
            MHD_start_daemon_va(flags, 0, nil, nil, accessHandler, context, list)
        }
        return daemon != nil
    }

    /// Stops a daemon whose thread never started (another loop failed to start).
    func stopUnstarted() {
        guard let daemon, !started else { return }
        _ = MHD_quiesce_daemon(daemon)  // so that stopping leaves the shared socket open
        MHD_stop_daemon(daemon)
        self.daemon = nil
    }

    /// Starts the loop's thread.
    func startThread() -> Bool {
        let retained = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let loop = Unmanaged<EventLoop>.fromOpaque(argument).takeRetainedValue()
                loop.run()
                return nil
            }, retained)
        guard status == 0 else {
            Unmanaged<EventLoop>.fromOpaque(retained).release()
            return false
        }
        started = true
        return true
    }

    /// Whether the caller is this loop's thread.
    var isCurrentThread: Bool { threadID.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Wakes the loop for a pass: an answer was given from another thread, or work it deferred
    /// is ready. Wakes before the loop next looks cost no system call.
    func wake() {
        guard !wakePending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// Asks the loop to stop accepting, finish the requests in flight (up to `grace` seconds)
    /// and stop its daemon.
    func requestStop(grace: Double) {
        graceNanoseconds.store(UInt64(max(0, grace) * 1_000_000_000), ordering: .relaxed)
        stopRequested.store(true, ordering: .releasing)
        wake()
    }

    /// Waits for the loop's thread to end.
    func join() {
        guard started else { return }
        pthread_join(thread, nil)
        started = false
    }

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .relaxed)
        guard let daemon else { return }
        var descriptors = [
            pollfd(fd: cupcake_daemon_epoll_fd(daemon), events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        var deadline: UInt64?
        while true {
            if deadline == nil && stopRequested.load(ordering: .acquiring) {
                _ = MHD_quiesce_daemon(daemon)
                deadline = DispatchTime.now().uptimeNanoseconds + graceNanoseconds.load(ordering: .relaxed)
            }
            if let deadline,
                server.activeRequests.load(ordering: .acquiring) == 0 || DispatchTime.now().uptimeNanoseconds >= deadline
            {
                break
            }
            _ = MHD_run(daemon)
            if server.handler.finishPass(worker: index) { continue }
            // Wait for the network, a connection's timeout, an answer from another thread, or
            // (while draining) a few milliseconds. MHD asks for no wait at all while a request
            // is awaiting its answer (it calls the handler again each pass); those answers come
            // with a wake, so then a millisecond at most.
            var wait: Int32 = deadline == nil ? 1000 : 5
            var timeout: UInt64 = 0
            if MHD_get_timeout(daemon, &timeout) == .YES {
                wait = Int32(min(UInt64(wait), awaiting > 0 ? max(timeout, 1) : timeout))
            }
            if poll(&descriptors, 2, wait) > 0 && descriptors[1].revents != 0 {
                // Drain first, then clear: a wake that lands after the clear writes again, and
                // one that lands before it is seen by the pass that follows.
                var count: UInt64 = 0
                _ = read(wakeFD, &count, MemoryLayout<UInt64>.size)
                wakePending.store(false, ordering: .sequentiallyConsistent)
            }
        }
        MHD_stop_daemon(daemon)
        self.daemon = nil
    }
}
