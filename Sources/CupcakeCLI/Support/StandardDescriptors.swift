import Glibc

/// Keeps descriptors 0, 1 and 2 open.
///
/// A program started with one of them closed (`cupcake serve 2>&-`, a careless supervisor) has
/// its next `open` or `socket` given that number, and whatever the program then writes to
/// standard error goes there instead: a connection's socket, say, which would receive access-log
/// lines. SQLite refuses numbers 0-2 for its own files for the same reason. Each closed one is
/// opened on /dev/null here, first thing, so they can never be handed out.
/// `StandardDescriptorTests` starts a server with all three closed.
enum StandardDescriptors {
    static func reserve() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            // `open` takes the lowest free number, which is this one (the lower ones are open).
            let opened = open("/dev/null", O_RDWR)
            if opened >= 0, opened != descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
    }
}
