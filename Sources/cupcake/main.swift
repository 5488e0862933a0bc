import CupcakeCLI
import Glibc

// First, before anything opens a descriptor: the async runtime's first step takes two (an epoll
// and an eventfd), which would otherwise be numbers 1 and 2 when standard output and error are
// closed, and the access log would then be written into the event loop's eventfd. So this file
// has no top-level `await`; the command runs on a task while the main thread waits.
CommandLineTool.reserveStandardDescriptors()
// A closed pipe (`cupcake orders list | head`) must not kill the process mid-write.
signal(SIGPIPE, SIG_IGN)
// A file-size limit (`ulimit -f`) must fail the write that passes it (EFBIG, which the store
// answers with 503), not kill the server. (Without this line the server's writing threads
// happened to survive it too; this makes it a decision rather than an accident.)
signal(SIGXFSZ, SIG_IGN)
let status = CommandLineTool.runAndWait(Array(CommandLine.arguments.dropFirst()), console: .process)
// Everything was written with write(2) and nothing is buffered, so skip the atexit handlers: the
// runtime's teardown is a measurable part of a one-shot `cupcake order`.
_exit(status)
