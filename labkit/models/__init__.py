"""The networks and model transforms more than one chapter uses, in one shared room.

`resnet` (the course's ResNet-50 and its layout tracing) and `folding` (Conv-BN folding)
lived in `core/` and in chapter 04's folder; chapters 03, 04, 05, 06, 08 and the audit
import them from here, so no chapter reaches into another's folder. The layer sits above
`measure` (folding times itself with its harness) and below everything that teaches.
"""
