package io.jbof.initiator.cli;

import io.jbof.initiator.ConnectOptions;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(
        name = "show-hostnqn",
        description = "Print the host NQN and host ID this machine connects with (as nvme show-hostnqn).")
public final class ShowHostnqnCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        UUID id = ConnectOptions.defaultHostId();
        System.out.println(ConnectOptions.defaultHostNqn(id));
        System.err.println("hostid: " + id);
        return 0;
    }
}
