import Foundation
import KeychainModel
import SyncCrypto
@testable import SyncJoin
import Testing

/// CPace-ristretto255-SHA512 against draft-irtf-cfrg-cpace's test vectors (appendix "Test
/// vector for CPace using group ristretto255 and hash SHA-512"), then as two parties use it.
@Suite struct CPaceTests {
    static func hex(_ text: String) -> Data {
        let digits = Array(text.filter { !$0.isWhitespace })
        return Data(stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! })
    }

    let prs = SecretBytes("Password".utf8)
    let channel = hex("0b415f696e69746961746f720b425f726573706f6e646572")
    let sid = hex("7e4b4791d6a8ef019b936c79fb7f2c57")
    let ya = SecretBytes(hex("da3d23700a9e5699258aef94dc060dfda5ebb61f02a5ea77fad53f4ff0976d08"))
    let yb = SecretBytes(hex("d2316b454718c35362d83d69df6320f38578ed5984651435e2949762d900b80d"))

    @Test func theDraftsVectors() throws {
        #expect(Data(CPace.generatorString(prs: prs, channel: channel, sid: sid)) == Self.hex("""
            11435061636552697374726574746f3235350850617373776f726464
            00000000000000000000000000000000000000000000000000000000
            00000000000000000000000000000000000000000000000000000000
            00000000000000000000000000000000000000000000000000000000
            00000000000000000000000000000000180b415f696e69746961746f
            720b425f726573706f6e646572107e4b4791d6a8ef019b936c79fb7f
            2c57
            """))
        #expect(Data(CPace.generator(prs: prs, channel: channel, sid: sid)) == Self.hex("222b6b195fe84b1652badb6f6a3ae3d24341e7306967f0b8115b40d5698c7e56"))
        let a = try CPace(role: .initiator, prs: prs, channel: channel, sid: sid, associatedData: Data("ADa".utf8), scalar: ya)
        let b = try CPace(role: .responder, prs: prs, channel: channel, sid: sid, associatedData: Data("ADb".utf8), scalar: yb)
        #expect(a.share == Self.hex("d6bac480f2c386c394efc7c47adb9925dcd2630b64f240c50f8d0eec482b9157"))
        #expect(b.share == Self.hex("3ea7e0b19560d7c0b0f5734f63b955286dfa8232b5ebe63324e2d9e7433f7258"))
        let k: SecretBytes = try CPace.multiply(ya, Array(b.share))
        #expect(k.withUnsafeBytes { Data($0) } == Self.hex("80b69a8a76457ab6a4d7f887a4bf6b55a2f80ac19c333f917a05fc9887c8b40f"))
        #expect(Data(CPace.transcript(a.share, a.associatedData, b.share, b.associatedData)) == Self.hex("""
            20d6bac480f2c386c394efc7c47adb9925dcd2630b64f240c50f8d0e
            ec482b915703414461203ea7e0b19560d7c0b0f5734f63b955286dfa
            8232b5ebe63324e2d9e7433f725803414462
            """))
        let isk = Self.hex("""
            b69effbf61b51d56401c0f65601abe428de8206feaaf0e32198896dc
            ae7b35cd2b38950a39dfd5d4a79164614c2984f7daa460b588c1e80c
            3fa2068af7900447
            """)
        let iskA = try a.finish(peerShare: b.share, peerAssociatedData: b.associatedData)
        let iskB = try b.finish(peerShare: a.share, peerAssociatedData: a.associatedData)
        #expect(iskA.withUnsafeBytes { Data($0) } == isk && iskB.withUnsafeBytes { Data($0) } == isk)
    }

    /// The draft's scalar_mult_vfy cases: a valid point, then a point that does not decode
    /// and the identity, both refused.
    @Test func invalidPointsAreRefused() throws {
        let s = SecretBytes(Self.hex("7cd0e075fa7955ba52c02759a6c90dbbfc10e6d40aea8d283e407d88cf538a05"))
        let valid: SecretBytes = try CPace.multiply(s, Array(Self.hex("2c3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c")))
        #expect(valid.withUnsafeBytes { Data($0) } == Self.hex("7c13645fe790a468f62c39beb7388e541d8405d1ade69d1778c5fe3e7f6b600e"))
        let a = try CPace(role: .initiator, prs: prs, channel: channel, sid: sid, associatedData: Data())
        for bad in ["2b3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c", String(repeating: "00", count: 32)] {
            #expect(throws: SyncCryptoError(.authentication, "")) { try a.finish(peerShare: Self.hex(bad), peerAssociatedData: Data()) }
        }
        #expect(throws: SyncCryptoError(.malformed, "")) { try a.finish(peerShare: Data(count: 31), peerAssociatedData: Data()) }
    }

    /// Two parties with the same code agree and confirm; with another code they do not, and
    /// neither confirmation verifies.
    @Test func theSameCodeAgreesAndAnotherDoesNot() throws {
        func run(_ codeA: String, _ codeB: String) throws -> (Bool, Bool, Bool) {
            let a = try CPace(role: .initiator, prs: SecretBytes(codeA.utf8), channel: channel, sid: sid, associatedData: Data("new device".utf8))
            let b = try CPace(role: .responder, prs: SecretBytes(codeB.utf8), channel: channel, sid: sid, associatedData: Data("member".utf8))
            let iskA = try a.finish(peerShare: b.share, peerAssociatedData: b.associatedData)
            let iskB = try b.finish(peerShare: a.share, peerAssociatedData: a.associatedData)
            return (iskA.isEqual(to: iskB),
                    b.verifyConfirmation(a.confirmation(isk: iskA), isk: iskB, peerShare: a.share, peerAssociatedData: a.associatedData),
                    a.verifyConfirmation(b.confirmation(isk: iskB), isk: iskA, peerShare: b.share, peerAssociatedData: b.associatedData))
        }
        #expect(try run("4821-0937", "4821-0937") == (true, true, true))
        #expect(try run("4821-0937", "4821-0938") == (false, false, false))
        // Fresh scalars: two runs with one code share nothing.
        let first = try CPace(role: .initiator, prs: prs, channel: channel, sid: sid, associatedData: Data())
        let second = try CPace(role: .initiator, prs: prs, channel: channel, sid: sid, associatedData: Data())
        #expect(first.share != second.share)
    }
}
