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

    /// Where the task's code ran (`threads`), whether it was inside `run` each time
    /// (`onExecutor`), and which threads resumed it from outside (`resumers`).
    struct Trace: Sendable {
        var threads: [UInt] = []
        var onExecutor: [Bool] = []
        var resumers: [UInt] = []

        mutating func here() {
            threads.append(CallingThreadExecutorTests.thread)
            onExecutor.append(CallingThreadExecutor.isCurrentThread)
        }
    }

    static func wait(_ wait: Wait, _ trace: inout Trace) async {
        switch wait {
        case .continuationFromAnotherThread:
            let resumer = await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { continuation.resume(returning: thread) }
            }
            trace.resumers.append(resumer)
        case .sleep:
            try? await Task.sleep(nanoseconds: 10_000_000)
        case .childTasks:
            let children = await withTaskGroup(of: UInt.self) { group in
                for _ in 0..<4 { group.addTask { thread } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            trace.threads += children
        case .asyncLet:
            async let first = thread
            async let second = thread
            trace.threads += await [first, second]
        case .mixed:
            for part in [Wait.sleep, .continuationFromAnotherThread, .childTasks, .asyncLet] {
                await Self.wait(part, &trace)
                trace.here()
            }
        }
        trace.here()
    }

    @Test(arguments: Wait.allCases) func everyJobRunsOnTheCallingThread(_ wait: Wait) async {
        let (caller, trace) = await Self.onOwnThread {
            let trace = CallingThreadExecutor.run { () async -> Trace in
                var trace = Trace()
                trace.here()
                await Self.wait(wait, &trace)
                return trace
            }
            return (Self.thread, trace)
        }
        #expect(trace.threads.count >= 2)
        #expect(trace.threads.allSatisfy { $0 == caller }, "threads seen: \(trace.threads), caller: \(caller)")
        #expect(trace.onExecutor.allSatisfy { $0 })
        // The continuation was resumed from a thread of the global queue, not from the caller.
        #expect(trace.resumers.allSatisfy { $0 != caller })
        #expect(!trace.resumers.isEmpty == [.continuationFromAnotherThread, .mixed].contains(wait))
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
