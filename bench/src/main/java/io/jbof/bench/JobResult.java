package io.jbof.bench;

/** What one job (or a group of jobs merged) did while measuring. */
final class JobResult {
    final String name;
    final int jobs;
    final DirectionStats read = new DirectionStats();
    final DirectionStats write = new DirectionStats();
    long runtimeNanos;
    /** 0, or the errno-like code fio would print (5 = EIO) when a command failed. */
    int error;

    String errorText;
    long verifiedBlocks;
    long verifyErrors;
    String firstVerifyError;
    /** CPU of this process over the run, shared out evenly to jobs (the JVM does not split it by thread). */
    double usrCpuPercent;

    double sysCpuPercent;

    JobResult(String name, int jobs) {
        this.name = name;
        this.jobs = jobs;
    }

    static JobResult merge(String name, Iterable<JobResult> parts) {
        int n = 0;
        for (JobResult p : parts) n += p.jobs;
        JobResult m = new JobResult(name, n);
        for (JobResult p : parts) {
            m.read.add(p.read);
            m.write.add(p.write);
            m.runtimeNanos = Math.max(m.runtimeNanos, p.runtimeNanos);
            if (m.error == 0 && p.error != 0) {
                m.error = p.error;
                m.errorText = p.errorText;
            }
            m.verifiedBlocks += p.verifiedBlocks;
            m.verifyErrors += p.verifyErrors;
            if (m.firstVerifyError == null) m.firstVerifyError = p.firstVerifyError;
            m.usrCpuPercent += p.usrCpuPercent;
            m.sysCpuPercent += p.sysCpuPercent;
        }
        return m;
    }
}
