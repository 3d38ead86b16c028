import HummingbirdCore
import Logging
import NIOCore

/// A connection's first request must send its whole head — request line and headers — within
/// the idle timeout of the connection's start, or the connection is closed.
///
/// Hummingbird's idle timeout (`HTTPConnectionStateHandler`) guards a connection only once it
/// is in the pipeline, and with the WebSocket upgrade that is after the first request's head
/// was read (the upgrade handler decides first). Without this, a client could hold a
/// connection — a socket, memory, a place among the server's file descriptors — forever by
/// sending half a request line, or a byte a minute. A deadline, not an idle timer: bytes
/// trickled in do not move it. After the head the handler leaves the pipeline; Hummingbird's
/// idle timeout then guards the HTTP requests that follow, and the WebSocket's pings a hint
/// socket (which that timeout does not close).
struct RequestHeadDeadlineChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // Added before the base's handlers, so it sees the bytes before the HTTP decoder
        // (inside TLS when this channel is TLSChannel's base: plaintext).
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RequestHeadDeadline(timeout: timeout))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Closes the channel `timeout` after it was added unless the end of a request head (an
/// empty line) has passed by then; then it removes itself. It reads the bytes and passes them
/// on unchanged.
final class RequestHeadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// Whether the head has begun: line ends before its first byte do not end it (HTTP lets
    /// a client send empty lines before a request line).
    private var started = false
    /// Line feeds in a row, carriage returns ignored: the second ends the head, as
    /// "\r\n\r\n" does (or "\n\n", which NIO's HTTP parser also takes).
    private var lineFeeds = 0
    private var ended = false

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !ended {
            for byte in unwrapInboundIn(data).readableBytesView {
                switch byte {
                case UInt8(ascii: "\n"): lineFeeds += started ? 1 : 0
                case UInt8(ascii: "\r"): break
                default:
                    started = true
                    lineFeeds = 0
                }
                if lineFeeds == 2 {
                    ended = true
                    break
                }
            }
        }
        context.fireChannelRead(data)
        if ended {
            deadline?.cancel()
            deadline = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
