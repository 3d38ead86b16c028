import Testing

import BenchWorkload

/// CI's instructions gate (scripts/bench-instructions --check): what it lets through and
/// what it fails, and how it reads callgrind_control's counters.
@Suite struct InstructionBaselineTests {
    static let baseline = InstructionReport(
        items: 1_000, operations: 200, warmUp: 20,
        rows: [
            InstructionRow(operation: "find with data", securityd: 100_000, enclave: 10_000, client: 20_000),
            InstructionRow(operation: "find attributes", securityd: 80_000, enclave: 0, client: 18_000),
        ])

    static func measured(findData securityd: Int, enclave: Int = 10_000, attributesEnclave: Int = 0) -> InstructionReport {
        var report = baseline
        report.rows[0].securityd = securityd
        report.rows[0].enclave = enclave
        report.rows[1].enclave = attributesEnclave
        return report
    }

    @Test func growthWithinThreePercentPasses() {
        let (failures, notes) = Self.baseline.compare(Self.measured(findData: 102_900))
        #expect(failures.isEmpty && notes.isEmpty, "\(failures) \(notes)")
    }

    @Test func growthBeyondThreePercentFailsNamingTheRowAndProcess() {
        let (failures, _) = Self.baseline.compare(Self.measured(findData: 104_100))
        #expect(failures == ["find with data, securityd: 104100 instructions against 100000 (+4.1 %)"])
    }

    @Test func aProcessThatDoesNothingInARowIsAllowedAMetadataKeyFetch() {
        // What a host busier than the baseline's adds in a row where the enclave does next to nothing.
        #expect(Self.baseline.compare(Self.measured(findData: 100_000, attributesEnclave: 775)).failures.isEmpty)
        #expect(Self.baseline.compare(Self.measured(findData: 100_000, attributesEnclave: 5_000)).failures.count == 1)
    }

    @Test func aCutBeyondThreePercentIsANoteNotAFailure() {
        let (failures, notes) = Self.baseline.compare(Self.measured(findData: 60_000, enclave: 8_000))
        #expect(failures.isEmpty)
        #expect(notes.count == 2, "\(notes)")
    }

    @Test func aProcessCountedAsNothingFails() {
        // A process callgrind_control did not reach must not pass as a cut to zero.
        #expect(Self.baseline.compare(Self.measured(findData: 100_000, enclave: 0)).failures.count == 1)
    }

    @Test func aMissingRowOrAnotherSizeFails() {
        var fewer = Self.baseline
        fewer.rows.removeLast()
        #expect(Self.baseline.compare(fewer).failures == ["find attributes: not measured"])
        var smaller = Self.baseline
        smaller.items = 100
        #expect(Self.baseline.compare(smaller).failures.count == 1)
        #expect(fewer.compare(Self.baseline).failures == ["find attributes: not in the baseline"])
    }

    @Test func callgrindControlsCountersAreSummedOverThreads() {
        let output = """
            PID 3403: /usr/bin/securityd --home /tmp/h
            sending command status internal to pid 3403

              Totals:        Ir
               Th 1  25,372,596
               Th 2       1,004
              Th10          10

            PID 3405: /usr/bin/client (not reached: no counters follow)

            PID 3410: /usr/bin/trousseau-enclave --home /tmp/h

              Totals:        Ir
               Th 1  7
            """
        let counts = CallgrindCounters.parse(output.split(separator: "\n"))
        #expect(counts == [3403: 25_373_610, 3410: 7])
    }
}
