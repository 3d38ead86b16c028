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
}
