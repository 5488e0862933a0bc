import CupcakeTestSupport
import Foundation
import Synchronization
import Testing

/// The tests wait for servers by connecting until one is accepted, while in-process servers and
/// other clients open descriptors on other threads. A refused connection must close its socket
/// once: a second close would hit whatever the kernel handed that number to in between (an
/// in-process server's connection, which libmicrohttpd then fails to take out of its epoll set
/// and aborts on, or another client's socket, whose request then seems unanswered).
@Suite struct RefusedConnectionTests {
    @Test func aRefusedConnectionClosesNoOneElsesDescriptor() throws {
        let port = try FreePort.next()
        let done = Atomic(false)
        let attempts = 5_000
        let refusals = Atomic(0)
        let thread = Thread {
            for _ in 0..<attempts where (try? TestSocket(port: port, timeout: 1)) == nil {
                refusals.add(1, ordering: .relaxed)
            }
            done.store(true, ordering: .releasing)
        }
        thread.start()
        // Meanwhile this thread keeps taking the lowest free numbers (those a refused socket just
        // gave back) and checks that they stay open.
        var checked = 0
        var lost = 0
        var pair: [Int32] = [0, 0]
        while !done.load(ordering: .acquiring), checked < 1_000_000 {
            guard pipe(&pair) == 0 else { break }
            for _ in 0..<50 where fcntl(pair[0], F_GETFD) < 0 || fcntl(pair[1], F_GETFD) < 0 {
                lost += 1
                break
            }
            close(pair[0])
            close(pair[1])
            checked += 1
        }
        var waited = 0
        while !done.load(ordering: .acquiring), waited < 600 {  // at most 60 s
            usleep(100_000)
            waited += 1
        }
        let finished = done.load(ordering: .acquiring)
        let refused = refusals.load(ordering: .relaxed)
        #expect(finished)
        #expect(refused == attempts)
        #expect(checked > 0)
        #expect(lost == 0, "\(lost) of \(checked) descriptors were closed by another thread's refused connection")
    }
}
