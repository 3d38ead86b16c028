import Foundation
import KeychainTestSupport
import Testing

/// A caller is pinned by a pidfd from the moment its connection is identified: a caller
/// that exits and whose pid another process takes before securityd has read who it is gets
/// refused, not the other process's access groups.
///
/// The race is made certain, not hoped for: in a user and pid namespace of its own (where
/// `ns_last_pid` is writable), a test build's securityd waits 2 s between reading a
/// connection's credentials and pinning its process (`TROUSSEAU_TEST_IDENTIFY_DELAY_MS`);
/// meanwhile the `security` tool that connected and sent an add is killed and `sleep` is
/// started with its pid. Without the pin, securityd then reads `sleep`'s executable and
/// adds the item in `sleep`'s group.
@Suite struct CallerPinningTests {
    static let script = #"""
        set -u
        bin=$1 home=$2 runtime=$3 log=$4 mode=$5
        export KEYCHAIN_HOME=$home XDG_RUNTIME_DIR=$runtime TROUSSEAU_UNSAFE_FAST_KDF=1
        export TROUSSEAU_TEST_IDENTIFY_DELAY_MS=2000 TROUSSEAU_SECURITYD_LOG=$log TROUSSEAU_SECURITYD_IDLE_SECONDS=60
        [ "$mode" = pidfd-open ] && export TROUSSEAU_TEST_NO_PEER_PIDFD=1
        socket=$("$bin/securityd" --home "$home" --print-socket)
        "$bin/securityd" --home "$home" &
        for _ in $(seq 200); do [ -S "$socket" ] && break; sleep 0.05; done
        "$bin/security" add-generic-password -a first -s pidreuse -w kept || exit 10
        "$bin/security" add-generic-password -a victim -s pidreuse -w taken &
        victim=$!
        sleep 0.8
        kill -9 "$victim"; wait "$victim" 2> /dev/null
        echo $((victim - 1)) > /proc/sys/kernel/ns_last_pid
        sleep 30 &
        reuser=$!
        [ "$reuser" = "$victim" ] || { echo "pid $victim was not reused (got $reuser)"; exit 11; }
        echo "reused $victim"
        sleep 2.5
        "$bin/security" find-generic-password -a victim -s pidreuse > /dev/null 2>&1
        echo "victim lookup: $?"
        echo "first: $("$bin/security" find-generic-password -a first -s pidreuse -w)"
        kill "$reuser"
        """#

    static let canUnshare: Bool = {
        guard let result = try? CommandRunner.run(executable: "/usr/bin/unshare", ["-Urpf", "--mount-proc", "/bin/true"]) else { return false }
        return result.status == 0
    }()

    @Test(
        .enabled(if: canUnshare, "needs unprivileged user and pid namespaces (unshare -Urpf)"),
        arguments: ["peer-pidfd", "pidfd-open"])
    func aCallerWhosePidIsReusedBeforeItIsIdentifiedIsRefused(mode: String) throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let runtime = directory + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let log = directory + "/securityd.log"
        let result = try CommandRunner.run(
            executable: "/usr/bin/unshare",
            ["-Urpf", "--mount-proc", "/bin/bash", "-c", Self.script, "pinning", CommandRunner.productsDirectory.path, directory + "/keychain", runtime, log, mode])
        let logText = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(result.stdout.contains("reused "), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("victim lookup: 44"), "the other process got the caller's request: \(result.stdout) \(logText)")
        #expect(result.stdout.contains("first: kept"), "\(result.stdout) \(result.stderr)")
        #expect(logText.contains("has gone before it was identified"), "\(logText)")
    }
}
