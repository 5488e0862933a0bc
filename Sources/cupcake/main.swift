import CupcakeCLI
import Foundation

// A closed pipe (`cupcake orders list | head`) must not kill the process mid-write.
signal(SIGPIPE, SIG_IGN)
let status = await CommandLineTool.run(Array(CommandLine.arguments.dropFirst()), console: .process)
// Everything was written with write(2) and nothing is buffered, so skip the atexit teardown of
// Foundation and URLSession: it is a measurable part of a one-shot `cupcake order`.
_exit(status)
