# power-loss-direct: power-loss with the virtio disk exported as a block-device namespace by O_DIRECT.
POWER_LOSS_DIRECT=1
. /jbof/scripts/vm/guest/power-loss.sh
