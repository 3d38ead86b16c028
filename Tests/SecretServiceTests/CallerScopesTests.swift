import Foundation
import KeychainTestSupport
@testable import KeychainCallers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// How a caller's `/.flatpak-info` decides its scope: only a missing file means an unsandboxed
/// program; one that cannot be read refuses the caller (before, a symlinked or unreadable
/// file read as "no sandbox", and the caller got the host's items).
struct CallerScopesTests {
    @Test func onlyAMissingFileMeansNoSandbox() throws {
        let directory = try TemporaryKeychain.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(FlatpakSandbox.info(atPath: directory + "/.flatpak-info") == .notSandboxed)

        let file = directory + "/file"
        try Data("[Application]\nname=org.example.App\nruntime=runtime/org.gnome.Platform/x86_64/45\n".utf8).write(to: URL(fileURLWithPath: file))
        guard case .flatpak(let bytes) = FlatpakSandbox.info(atPath: file) else {
            Issue.record("a readable file is the sandbox's")
            return
        }
        #expect(FlatpakSandbox.applicationID(in: bytes) == "org.example.App")

        let link = directory + "/link"
        #expect(symlink(file, link) == 0)
        #expect(FlatpakSandbox.info(atPath: link) == .unreadable(ELOOP))
        let folder = directory + "/folder"
        #expect(mkdir(folder, 0o755) == 0)
        #expect(FlatpakSandbox.info(atPath: folder) == .unreadable(EISDIR))
    }

    @Test func anApplicationIDFollowsDBusNameRules() {
        func id(_ text: String) -> String? { FlatpakSandbox.applicationID(in: Array(text.utf8)) }
        #expect(id("[Instance]\nname=org.evil.App\n[Application]\nname=org.example.App\n") == "org.example.App")
        #expect(id("[Application]\n  name=com.example.Tool-2_x  \n") == "com.example.Tool-2_x")
        #expect(id("[Application]\nname=single\n") == nil)
        #expect(id("[Application]\nname=org..example\n") == nil)
        #expect(id("[Application]\nname=.org.example\n") == nil)
        #expect(id("[Application]\nname=org.example/../x\n") == nil)
        #expect(id("[Application]\nname=org.exämple.App\n") == nil)
        #expect(id("[Application]\nname=org." + String(repeating: "a", count: 260) + "\n") == nil)
        #expect(id("[Runtime]\nname=org.example.App\n") == nil)
        #expect(FlatpakSandbox.applicationID(in: [0xff, 0xfe]) == nil)
    }

    /// A Snap app is told by its systemd unit, as xdg-desktop-portal tells one: a path with
    /// `/snap.` in the freezer, `name=systemd` or unified hierarchy; the instance name is the
    /// unit's second word. A unit that names no valid snap is refused, not taken for the host.
    @Test func aSnapIsToldByItsUnit() throws {
        // cgroup v2 (Ubuntu 22.04 and later), a hook, and v1 with an instance key.
        #expect(SnapSandbox.info(cgroup: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.firefox.firefox-2f1e3a.scope\n") == .snap("firefox"))
        #expect(SnapSandbox.info(cgroup: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.my-app.hook.configure-1.scope\n") == .snap("my-app"))
        #expect(
            SnapSandbox.info(cgroup: "12:memory:/user.slice\n6:freezer:/snap.code_insiders\n1:name=systemd:/user.slice/user-1000.slice/session-2.scope\n")
                == .snap("code_insiders"))
        // The host: a session, a user service, snapd itself; `/snap.` in another controller only.
        #expect(SnapSandbox.info(cgroup: "0::/user.slice/user-1000.slice/session-2.scope\n") == .notSandboxed)
        #expect(SnapSandbox.info(cgroup: "0::/system.slice/snapd.service\n") == .notSandboxed)
        #expect(SnapSandbox.info(cgroup: "4:memory:/snap.firefox.firefox\n0::/user.slice\n") == .notSandboxed)
        #expect(SnapSandbox.info(cgroup: "") == .notSandboxed)
        // A snap's unit with no valid name in it.
        for unit in ["snap..x", "snap.Firefox.x", "snap.-x.y", "snap.a.b", "snap.ab_.c", "snap.ab_TOOLONGKEY1.c", "snap.a--b.c", "snap.12.c"] {
            #expect(SnapSandbox.info(cgroup: "0::/app.slice/\(unit)-1.scope\n") == .unnamed, "\(unit)")
        }
        #expect(SnapSandbox.info(cgroupAtPath: "/nonexistent/cgroup") == .unreadable(ENOENT))
        #expect(SnapSandbox.info(cgroupAtPath: "/proc/self/cgroup") == .notSandboxed)
        #expect(SecretScope.snap("firefox")?.groups == ["org.freedesktop.secrets.snap.firefox"])
        #expect(SecretScope.snap("../x") == nil)
    }
}
