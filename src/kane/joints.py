"""Joint kinds (re-exported from :mod:`kane.model.joints`): ``kane.joints.Revolute("z")`` and so on."""

from .model.joints import (Cylindrical, Free, Gimbal, Joint, JointKinematics, Planar, Prismatic, Revolute, SpeedMap,
                           Speeds, Spherical, Universal, Weld)

__all__ = ["Joint", "JointKinematics", "Revolute", "Prismatic", "Cylindrical", "Universal", "Planar", "Gimbal",
           "Spherical", "Free", "Weld", "Speeds", "SpeedMap"]
