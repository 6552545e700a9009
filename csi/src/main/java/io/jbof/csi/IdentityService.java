package io.jbof.csi;

import com.google.protobuf.BoolValue;
import io.grpc.ServerServiceDefinition;
import io.jbof.csi.v1.GetPluginCapabilitiesRequest;
import io.jbof.csi.v1.GetPluginCapabilitiesResponse;
import io.jbof.csi.v1.GetPluginInfoRequest;
import io.jbof.csi.v1.GetPluginInfoResponse;
import io.jbof.csi.v1.PluginCapability;
import io.jbof.csi.v1.ProbeRequest;
import io.jbof.csi.v1.ProbeResponse;

/** The CSI Identity service: who the driver is and what it offers; the same answer in every mode. */
final class IdentityService {
    static final String DRIVER_NAME = "csi.jbof.io";
    static final String VERSION = "0.1.0";

    private IdentityService() {}

    static ServerServiceDefinition bind() {
        return bind(false);
    }

    /** {@code onlineExpansion}: whether nodes see a volume grow while it is published (--attach kernel). */
    static ServerServiceDefinition bind(boolean onlineExpansion) {
        return new CsiMethods.Binder("Identity")
                .unary(
                        "GetPluginInfo",
                        GetPluginInfoRequest.getDefaultInstance(),
                        GetPluginInfoResponse.getDefaultInstance(),
                        r -> GetPluginInfoResponse.newBuilder()
                                .setName(DRIVER_NAME)
                                .setVendorVersion(VERSION)
                                .build())
                .unary(
                        "GetPluginCapabilities",
                        GetPluginCapabilitiesRequest.getDefaultInstance(),
                        GetPluginCapabilitiesResponse.getDefaultInstance(),
                        r -> capabilities(onlineExpansion))
                .unary(
                        "Probe",
                        ProbeRequest.getDefaultInstance(),
                        ProbeResponse.getDefaultInstance(),
                        r -> ProbeResponse.newBuilder()
                                .setReady(BoolValue.of(true))
                                .build())
                .build();
    }

    private static GetPluginCapabilitiesResponse capabilities(boolean online) {
        return GetPluginCapabilitiesResponse.newBuilder()
                .addCapabilities(PluginCapability.newBuilder()
                        .setService(PluginCapability.Service.newBuilder()
                                .setType(PluginCapability.Service.Type.CONTROLLER_SERVICE)))
                // Offline with --attach jbof: a node attached by a jbof mount sees a grown namespace only when it
                // attaches again (the mount's file keeps the size it was opened with), so the CO grows volumes
                // while unpublished. Online with the kernel's nvme-tcp, which resizes the device in use.
                .addCapabilities(PluginCapability.newBuilder()
                        .setVolumeExpansion(PluginCapability.VolumeExpansion.newBuilder()
                                .setType(
                                        online
                                                ? PluginCapability.VolumeExpansion.Type.ONLINE
                                                : PluginCapability.VolumeExpansion.Type.OFFLINE)))
                .build();
    }
}
