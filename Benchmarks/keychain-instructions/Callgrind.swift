import BenchWorkload
import Foundation
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// Valgrind's callgrind around Trousseau's processes: how they are started under it, and
/// its counters read and zeroed while they run (`callgrind_control`, which reaches a process
/// blocked in a system call through vgdb).
struct Callgrind {
    /// Where callgrind's outputs and valgrind's logs go.
    let directory: String
    let valgrind: String
    let control: String

    init(directory: String) throws {
        self.directory = directory
        guard let valgrind = Self.onPath("valgrind"), let control = Self.onPath("callgrind_control") else {
            throw WorkloadError("valgrind and callgrind_control are needed (Debian: apt-get install valgrind)")
        }
        self.valgrind = valgrind
        self.control = control
    }

    /// Valgrind's arguments before the program: callgrind, outputs in ``directory``, and
    /// (for securityd) the enclave it starts followed into.
    func arguments(followingChildren: Bool) -> [String] {
        [
            "--tool=callgrind", "--trace-children=\(followingChildren ? "yes" : "no")",
            "--callgrind-out-file=\(directory)/callgrind.out.%p", "--log-file=\(directory)/valgrind.%p.log",
            "--vgdb-prefix=\(vgdbPrefix)",
            // Not counted: the enclave deriving a class's metadata key. securityd asks for it
            // again once its cached copy is a second old, so how often depends on the wall
            // clock (callgrind's pace, the host's load), not on the operations: 18 times in
            // one row of a run sharing the CPUs with a build, ~69,000 instructions each.
            // (--toggle-collect alone would count only inside it: collection is on from the start.)
            "--toggle-collect=\(Self.metadataKeyDerivation)", "--collect-atstart=yes",
        ]
    }

    /// `SoftwareKeybag.metadataKey(for:)`, as the symbol table names it.
    static let metadataKeyDerivation = "$s14EnclaveBackend14SoftwareKeybagC11metadataKey3for*"

    /// Where vgdb's pipes are, for valgrind and callgrind_control alike: by default they
    /// follow TMPDIR, which securityd and the enclave do not get.
    var vgdbPrefix: String { directory + "/vgdb-pipe" }

    /// Where the script below writes securityd's process id before it becomes valgrind.
    var daemonPIDFile: String { directory + "/securityd.pid" }

    /// A script that starts `securityd` under callgrind with its arguments: what the client
    /// is told the daemon is, so that securityd and its enclave run under callgrind from
    /// their first instruction.
    func daemonWrapper(securityd: String) throws -> String {
        let path = directory + "/securityd-under-callgrind"
        let words = [valgrind] + arguments(followingChildren: true) + [securityd]
        // securityd gets only the environment its client passes on (no SWIFT_DETERMINISTIC_HASHING).
        let script = """
            #!/bin/sh
            echo $$ > \(Self.quoted(daemonPIDFile))
            SWIFT_DETERMINISTIC_HASHING=1 exec \(words.map(Self.quoted).joined(separator: " ")) "$@"

            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        guard chmod(path, 0o700) == 0 else { throw WorkloadError("chmod \(path): \(String(cString: strerror(errno)))") }
        return path
    }

    /// The callgrind runs of this user, by process id: their command lines.
    func runs() throws -> [pid_t: String] {
        var runs: [pid_t: String] = [:]
        for line in try controlOutput([]) where line.hasPrefix("PID ") {
            // "PID 31466: /path/program arguments"
            guard let colon = line.firstIndex(of: ":"), let pid = pid_t(line.dropFirst(4)[..<colon]) else { continue }
            runs[pid] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        }
        return runs
    }

    /// Sets the counters of `pids` to zero.
    func zero(_ pids: [pid_t]) throws {
        let answers = try controlOutput(["--zero"] + pids.map(String.init)).filter { $0.trimmingCharacters(in: .whitespaces) == "OK." }
        guard answers.count == pids.count else {
            throw WorkloadError("callgrind_control --zero reached \(answers.count) of \(pids.count) processes (vgdb needs ptrace: root, or kernel.yama.ptrace_scope 0)")
        }
    }

    /// The instructions each of `pids` has executed since it was last zeroed, all threads.
    func instructions(_ pids: [pid_t]) throws -> [pid_t: UInt64] {
        let counts = CallgrindCounters.parse(try controlOutput(["-e", "Ir"] + pids.map(String.init)))
        guard Set(counts.keys) == Set(pids) else {
            throw WorkloadError("callgrind_control reported \(counts.keys.sorted()) for \(pids.sorted())")
        }
        return counts
    }

    /// Writes the profile of `pids` since they were last zeroed (callgrind.out.PID.N in
    /// ``directory``, for callgrind_annotate) and zeroes them.
    func dump(_ pids: [pid_t], label: String) throws {
        _ = try controlOutput(["--dump=\(label)"] + pids.map(String.init))
    }

    private func controlOutput(_ arguments: [String]) throws -> [Substring] {
        let (status, output) = try Spawn.capturingOutput(
            control, arguments: ["--vgdb-prefix=\(vgdbPrefix)"] + arguments, environment: ProcessInfo.processInfo.environment, standardInput: .null, standardError: .null
        ) { Spawn.readAll($0) }
        guard status == 0 else { throw WorkloadError("callgrind_control \(arguments.joined(separator: " ")) exited with \(status)") }
        return String(decoding: output, as: UTF8.self).split(separator: "\n")
    }

    static func onPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }

    private static func quoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
