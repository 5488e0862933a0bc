import CupcakeCLI

@_exported import struct CupcakeCLI.Console

/// The `cupcake-server` executable's command line: every `cupcake` subcommand, with `serve` and
/// `backup` run here rather than handed on.
public enum ServerCommandLine {
    /// Opens descriptors 0, 1 and 2 on /dev/null where they are closed; call it first.
    public static func reserveStandardDescriptors() {
        CommandLineTool.reserveStandardDescriptors()
    }

    /// Runs the command line on a task and blocks until it is done; returns the exit status.
    public static func runAndWait(_ arguments: [String], console: Console) -> Int32 {
        CommandLineTool.runAndWait(arguments, console: console, serverSide: InProcessServerSide())
    }
}
