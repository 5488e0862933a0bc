import CupcakeCheckout
import Foundation
import Testing

/// The executor `cupcake` runs a command on: every job of the task on the calling thread,
/// whatever the task waits for, and the result handed back.
@Suite struct CallingThreadExecutorTests {
    /// The calling thread, as a number.
    static var thread: UInt { UInt(pthread_self()) }

    /// Runs `body` on a thread of its own, as `main` does, so that blocking in it holds up none of
    /// the test runner's threads.
    static func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    /// The ways a task waits and comes back: each resumes the task from somewhere else.
    enum Wait: String, CaseIterable, Sendable {
        /// A continuation resumed from a thread of the global queue.
        case continuationFromAnotherThread
        /// `Task.sleep`, which the runtime's timer wakes.
        case sleep
        /// A group of child tasks.
        case childTasks
        /// `async let`.
        case asyncLet
        /// Several of them in a row.
        case mixed
    }

    static func wait(_ wait: Wait) async -> [UInt] {
        switch wait {
        case .continuationFromAnotherThread:
            let other = await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { continuation.resume(returning: thread) }
            }
            return [other == thread ? 0 : thread]
        case .sleep:
            try? await Task.sleep(nanoseconds: 10_000_000)
            return [thread]
        case .childTasks:
            return await withTaskGroup(of: UInt.self) { group in
                for _ in 0..<4 { group.addTask { thread } }
                return await group.reduce(into: []) { $0.append($1) }
            }
        case .asyncLet:
            async let first = thread
            async let second = thread
            return await [first, second]
        case .mixed:
            var seen: [UInt] = []
            for part in [Wait.sleep, .continuationFromAnotherThread, .childTasks, .asyncLet] {
                seen += await Self.wait(part)
            }
            return seen
        }
    }

    @Test(arguments: Wait.allCases) func everyJobRunsOnTheCallingThread(_ wait: Wait) async {
        let (caller, seen) = await Self.onOwnThread {
            let seen = CallingThreadExecutor.run { () async -> [UInt] in
                let before = [Self.thread, CallingThreadExecutor.isCurrentThread ? Self.thread : 0]
                let during = await Self.wait(wait)
                return before + during + [Self.thread, CallingThreadExecutor.isCurrentThread ? Self.thread : 0]
            }
            return (Self.thread, seen)
        }
        // The continuation's case records 0 when the resuming thread was another one (it must be).
        let expected = seen.map { $0 == 0 ? 0 : caller }
        #expect(!seen.isEmpty)
        #expect(seen == expected, "threads seen: \(seen), caller: \(caller)")
        #expect(!seen.contains(0) || wait == .continuationFromAnotherThread || wait == .mixed)
        #expect(!CallingThreadExecutor.isCurrentThread)
    }

    @Test func aDetachedTaskIsNotOnTheCallingThread() async {
        let inside = await Self.onOwnThread {
            CallingThreadExecutor.run { () async -> Bool in
                await Task.detached { CallingThreadExecutor.isCurrentThread }.value
            }
        }
        #expect(inside == false)
    }

    @Test func runsOneAfterAnotherOnTheSameThread() async {
        let results = await Self.onOwnThread {
            (0..<50).map { index in CallingThreadExecutor.run { () async -> Int in index * 2 } }
        }
        #expect(results == (0..<50).map { $0 * 2 })
    }
}
