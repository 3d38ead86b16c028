import FoundationEssentials
import KeychainFuzzTargets

// keychain-fuzz TARGET [libFuzzer options and corpus directories]: TARGET is frame,
// query or blob (FuzzTarget); the rest goes to libFuzzer's driver.

/// The target this process fuzzes, set once before the driver starts.
nonisolated(unsafe) var selected = FuzzTarget.frame

/// libFuzzer's entry point: one input to the selected decoder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    selected.run(Data(bytes: bytes, count: count))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// The executable's main as SwiftPM names it (it links `main` to `<module>_main`): takes
/// the target from the first argument and hands the rest to libFuzzer's driver.
@_cdecl("keychain_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    guard argc >= 2, let name = argv[1].map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name) else {
        print("usage: keychain-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) [libFuzzer options] [corpus…]")
        return 2
    }
    selected = target
    argv[1] = argv[0]  // libFuzzer sees: program, then its own arguments
    var count = argc - 1
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv + 1
    return runDriver(&count, &arguments, fuzzOneInput)
}
