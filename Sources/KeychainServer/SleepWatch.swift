import CSystemd
import KeychainLogging
import KeychainSystem

/// Watches logind for the machine going to sleep (its `PrepareForSleep` signal on the system
/// bus, from the owner of `org.freedesktop.login1` only), so that the keychains set to lock
/// on sleep (`set-keychain-settings -l`) do, as on macOS. Without a system bus (containers,
/// CI) there is no sleep to hear of: the watch logs why and ends.
public enum SleepWatch {
    /// Starts the watch on a thread of its own.
    ///
    /// - Parameters:
    ///   - address: another bus than the system bus (tests run their own).
    ///   - onSleep: what to do when the machine is about to sleep.
    public static func start(address: String?, onSleep: @escaping @Sendable () -> Void) {
        let started = ThreadLauncher.detach {
            let context = Unmanaged.passRetained(Handler(onSleep))
            defer { context.release() }
            let result = trousseau_watch_sleep(address, { goingToSleep, context in
                guard goingToSleep != 0, let context else { return }
                Unmanaged<Handler>.fromOpaque(context).takeUnretainedValue().onSleep()
            }, context.toOpaque())
            DaemonLog.logger.warning("no sleep notifications from logind: \(SystemCall.describe(-result)); keychains will not lock on sleep")
        }
        if !started { DaemonLog.logger.warning("cannot start the sleep watch; keychains will not lock on sleep") }
    }

    private final class Handler: Sendable {
        let onSleep: @Sendable () -> Void
        init(_ onSleep: @escaping @Sendable () -> Void) { self.onSleep = onSleep }
    }
}
